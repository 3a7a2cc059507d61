export type * from './types';
export type * as Api from './api-types';
export type { Foo as Bar } from './foo';
interface Local { n: number }
export type { Local };

const v: Local = { n: (await codemode.counter_get({ name: 'visits' })).value };
console.log(v.n);
