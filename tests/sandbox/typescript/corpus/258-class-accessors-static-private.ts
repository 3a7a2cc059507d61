class Quota {
  static #instances = new Map<string, Quota>();
  static for(team: string): Quota {
    let q = Quota.#instances.get(team);
    if (!q) Quota.#instances.set(team, (q = new Quota(team)));
    return q;
  }
  #used = 0;
  private constructor(readonly_team: string) {
    this.team = readonly_team;
  }
  readonly team: string;
  get used(): number {
    return this.#used;
  }
  consume(n: number): boolean {
    if (this.#used + n > 1000) return false;
    this.#used += n;
    return true;
  }
}

const requests: { team: string; cost: number }[] = await codemode.gateway_requests({ minutes: 60 });
const denied = requests.filter((r) => !Quota.for(r.team).consume(r.cost));
return { denied: denied.length, infra: Quota.for('infra').used };
