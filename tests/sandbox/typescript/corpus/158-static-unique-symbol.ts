class Tokens {
  static readonly secret: unique symbol = Symbol('secret');
  static readonly public_: unique symbol = Symbol.for('public');
  [Tokens.secret]?: string;
}

const t = new Tokens();
t[Tokens.secret] = (await codemode.vault_read({ path: 'ci/token' })).value as string;
return typeof t[Tokens.secret] === 'string' ? 'token loaded' : 'missing';
