class Budget {
  static #all = [];
  #spent = 0;
  constructor(name, limit) {
    this.name = name;
    this.limit = limit;
    Budget.#all.push(this);
  }
  spend(n) {
    this.#spent += n;
    return this.#spent <= this.limit;
  }
  static over() {
    return Budget.#all.filter((b) => b.#spent > b.limit).map((b) => b.name);
  }
}
const teams = await codemode.finance_budgets({ year: 2024 });
for (const t of teams) new Budget(t.team, t.monthly).spend(t.spent);
return Budget.over();
