async () => {
  class Base {
    kind: string = 'base';
    payload: unknown;
  }
  class Event extends Base {
    declare kind: 'event';
    declare readonly payload: { id: string; at: number };
    declare static version: number;
    source?: string;
  }

  const raw: Array<{ kind: string; payload: { id: string; at: number } }> = await codemode.events_tail({ n: 10 });
  const events = raw.map((r) => Object.assign(new Event(), r));
  return events.filter((e) => e.kind === 'event').map((e) => e.payload.id);
}
