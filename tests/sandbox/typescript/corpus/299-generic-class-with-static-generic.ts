async () => {
  class Result<T, E = Error> {
    private constructor(
      readonly_ok: boolean,
      readonly_value?: T,
      readonly_error?: E,
    ) {
      this.ok = readonly_ok;
      this.value = readonly_value;
      this.error = readonly_error;
    }
    readonly ok: boolean;
    readonly value?: T;
    readonly error?: E;
    static success<T>(value: T): Result<T, never> {
      return new Result<T, never>(true, value);
    }
    static failure<E>(error: E): Result<never, E> {
      return new Result<never, E>(false, undefined, error);
    }
    static async from<T>(p: Promise<T>): Promise<Result<T>> {
      try {
        return Result.success(await p);
      } catch (e) {
        return Result.failure(e instanceof Error ? e : new Error(String(e)));
      }
    }
    map<U>(f: (v: T) => U): Result<U, E> {
      return this.ok ? (Result.success(f(this.value as T)) as Result<U, E>) : (this as unknown as Result<U, E>);
    }
  }
  const r = await Result.from(codemode.http_get({ url: 'https://example.com' }));
  return r.map((res: { status: number }) => res.status).value ?? r.error?.message;
}
