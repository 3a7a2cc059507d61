class Semver {
  static readonly ZERO: Semver = new Semver(0, 0, 0);
  private static cache: Map<string, Semver> = new Map();

  private constructor(readonly_major: number, public_minor: number, patch: number) {
    this.major = readonly_major;
    this.minor = public_minor;
    this.patch = patch;
  }
  readonly major: number;
  readonly minor: number;
  readonly patch: number;

  static parse(text: string): Semver {
    const hit = Semver.cache.get(text);
    if (hit) return hit;
    const [a, b, c] = text.replace(/^v/, '').split('.').map(Number) as [number, number, number];
    const v = new Semver(a, b ?? 0, c ?? 0);
    Semver.cache.set(text, v);
    return v;
  }
  compare(other: Semver): -1 | 0 | 1 {
    const d = this.major - other.major || this.minor - other.minor || this.patch - other.patch;
    return d < 0 ? -1 : d > 0 ? 1 : 0;
  }
  toString(): string {
    return `${this.major}.${this.minor}.${this.patch}`;
  }
}

const releases: string[] = (await codemode.github_list_releases({ repo: 'acme/cli' })).map((r: any) => r.tag_name);
const latest = releases.map(Semver.parse).reduce((a, b) => (a.compare(b) >= 0 ? a : b), Semver.ZERO);
return latest.toString();
