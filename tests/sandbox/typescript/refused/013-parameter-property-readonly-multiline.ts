// refused: parameter property at 6
class Service {
  private cache = new Map<string, unknown>();
  constructor(
    name: string,
    public readonly url: string,
    private readonly timeoutMs: number = 5000,
  ) {
    void name;
  }
}
const s = new Service('api', 'https://example.com');
return s.url;
