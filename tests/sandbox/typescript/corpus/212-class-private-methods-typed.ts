async () => {
  class Tokenizer {
    #pos: number = 0;
    constructor(readonly_src: string) {
      this.src = readonly_src;
    }
    readonly src: string;
    #peek(): string | undefined {
      return this.src[this.#pos];
    }
    #take(re: RegExp): string {
      let out = '';
      while (this.#peek() !== undefined && re.test(this.#peek()!)) out += this.src[this.#pos++];
      return out;
    }
    *tokens(): Generator<{ type: 'num' | 'word' | 'sym'; text: string }> {
      while (this.#pos < this.src.length) {
        const c = this.#peek()!;
        if (/\s/.test(c)) this.#pos++;
        else if (/\d/.test(c)) yield { type: 'num', text: this.#take(/[\d.]/) };
        else if (/\w/.test(c)) yield { type: 'word', text: this.#take(/\w/) };
        else yield { type: 'sym', text: this.src[this.#pos++]! };
      }
    }
  }
  const text: string = await codemode.fs_read_file({ path: 'formula.txt' });
  return [...new Tokenizer(text).tokens()].slice(0, 20);
}
