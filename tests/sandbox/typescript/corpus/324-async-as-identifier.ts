const async: (x: number) => number = (x) => x * 2;
const fromCall = async(21);
const arrow = async (x: number): Promise<number> => x + 1;
const list: number[] = await codemode.kv_get({ key: 'numbers' });
const doubled = list.map(async);
const more = await Promise.all(list.map(arrow));
return { fromCall, doubled, more };
