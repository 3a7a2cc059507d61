// refused: parameter property at 4
async () => {
  class Client {
    constructor(private base: string) {}
    get(path: string) {
      return codemode.http_get({ url: this.base + path });
    }
  }
  return new Client('https://api.example.com').get('/status');
}
