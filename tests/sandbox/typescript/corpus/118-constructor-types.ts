async () => {
  type Ctor<T = object> = new (...args: any[]) => T;
  type AbstractCtor<T = object> = abstract new (...args: any[]) => T;

  function Timestamped<B extends Ctor>(Base: B) {
    return class extends Base {
      createdAt: number = Date.now();
    };
  }
  function isSubclass(C: AbstractCtor, Parent: AbstractCtor): boolean {
    return C.prototype instanceof Parent;
  }

  class Note {
    constructor(public_text: string) {
      this.text = public_text;
    }
    text: string;
  }
  const StampedNote = Timestamped(Note);
  const notes = (await codemode.notes_list({ limit: 3 })).map((n: { text: string }) => new StampedNote(n.text));
  return { count: notes.length, sub: isSubclass(StampedNote, Note), first: notes[0]?.createdAt };
}
