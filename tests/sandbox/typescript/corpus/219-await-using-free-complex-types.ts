type Listener<E extends keyof Events> = (payload: Events[E]) => void;
interface Events {
  created: { id: string };
  deleted: { id: string; hard: boolean };
}
type AnyListener = { [E in keyof Events]: [E, Listener<E>] }[keyof Events];

const listeners: AnyListener[] = [
  ['created', (p) => console.log('created', p.id)],
  ['deleted', (p) => console.log('deleted', p.id, p.hard)],
];
const feed: { type: keyof Events; payload: any }[] = await codemode.events_tail({ n: 20 });
let dispatched = 0;
for (const e of feed) {
  for (const [type, fn] of listeners) {
    if (type === e.type) {
      (fn as Listener<typeof type>)(e.payload);
      dispatched++;
    }
  }
}
return dispatched;
