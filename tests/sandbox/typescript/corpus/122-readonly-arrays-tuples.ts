const REGIONS: readonly string[] = ['us-east-1', 'eu-west-1', 'ap-south-1'];
const WEIGHTS: ReadonlyArray<number> = [0.5, 0.3, 0.2];
const PAIR: readonly [string, number] = ['cpu', 80];
const matrix: readonly (readonly number[])[] = [[1, 0], [0, 1]];

const latencies = await Promise.all(REGIONS.map((r) => codemode.ping_region({ region: r }) as Promise<number>));
const weighted = latencies.reduce((s, l, i) => s + l * WEIGHTS[i]!, 0);
return { weighted: Math.round(weighted), alarm: weighted > PAIR[1], identity: matrix.flat().length };
