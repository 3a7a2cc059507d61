async () => {
  const timeout = <T,>(p: Promise<T>, ms: number, label = 'operation'): Promise<T> =>
    Promise.race<T>([
      p,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${label} timed out after ${ms} ms`)), ms)),
    ]);
  const settle = async <T,>(p: Promise<T>): Promise<[T, null] | [null, Error]> => {
    try {
      return [await p, null];
    } catch (e) {
      return [null, e instanceof Error ? e : new Error(String(e))];
    }
  };

  const [data, err] = await settle(timeout(codemode.search_web({ q: 'corral sandbox' }), 5000, 'search'));
  return err ? { error: err.message } : { results: (data as { results: unknown[] }).results.length };
}
