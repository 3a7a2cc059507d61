const sizes: string[] = await codemode.storage_object_sizes({ bucket: 'archive' });
const total: bigint = sizes.map((s: string): bigint => BigInt(s)).reduce((a, b) => a + b, 0n);
const tb: bigint = 1_099_511_627_776n;
const ratio: number = Number((total * 1000n) / tb) / 1000;
const hex: number = 0xff_ff, bin: number = 0b1010, oct: number = 0o17, exp: number = 1e-3;
return { total: total.toString(), terabytes: ratio, sum: hex + bin + oct + exp };
