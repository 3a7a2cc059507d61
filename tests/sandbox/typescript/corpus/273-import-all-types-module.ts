import { type Readable, type Writable } from 'node:stream';
import {} from 'node:events';
export { type Readable };
export type { Writable as Sink } from 'node:stream';

let source: Readable | null = null;
let sink: Writable | null = null;
console.log(source === sink);
