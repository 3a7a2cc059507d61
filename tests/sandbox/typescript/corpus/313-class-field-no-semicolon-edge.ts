async () => {
  class Tracker {
    count: number
    ['label']: string = 'tracker'
    last?: Date
    *[Symbol.iterator](): Iterator<number> {
      yield this.count
    }
    history: number[]
    ['reset'](): void {
      this.count = 0
    }
    static: boolean
    get
    size(): number {
      return this.history.length
    }
    constructor() {
      this.count = 0
      this.history = []
      this.static = false
    }
  }
  const t = new Tracker()
  t.count = (await codemode.counter_get({ name: 'runs' })).value
  return [...t]
}
