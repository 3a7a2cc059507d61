async () => {
	interface Volume {
		name: string;
		sizeGb: number;
		attached: boolean;
	}
	const volumes: Volume[] = await codemode.cloud_list_volumes({ region: 'eu-central-1' });
	const orphaned = volumes.filter((v: Volume): boolean => !v.attached);
	const cost = orphaned.reduce((s: number, v) => s + v.sizeGb * 0.08, 0);
	return {
		orphaned: orphaned.map((v) => v.name),
		monthlyWaste: `$${cost.toFixed(2)}`,
	} as const;
}
