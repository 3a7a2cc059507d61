async () => {
  type State = 'idle' | 'fetching' | 'parsing' | 'done' | 'error';
  type Transition = { [S in State]?: State[] };
  const allowed: Readonly<Transition> = {
    idle: ['fetching'],
    fetching: ['parsing', 'error'],
    parsing: ['done', 'error'],
  };
  class Machine {
    state: State = 'idle';
    readonly history: [from: State, to: State][] = [];
    go(to: State): void {
      if (!allowed[this.state]?.includes(to)) throw new Error(`bad transition ${this.state} -> ${to}`);
      this.history.push([this.state, to]);
      this.state = to;
    }
  }
  const m = new Machine();
  let data: unknown;
  try {
    m.go('fetching');
    const r = await codemode.http_get({ url: 'https://example.com/data.json' });
    m.go('parsing');
    data = JSON.parse(r.body);
    m.go('done');
  } catch {
    m.go('error');
  }
  return { state: m.state, steps: m.history.length, data: data !== undefined };
}
