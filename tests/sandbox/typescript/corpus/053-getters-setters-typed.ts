async () => {
  class Budget {
    private _limit: number = 0;
    private _spent = 0;

    get limit(): number {
      return this._limit;
    }
    set limit(value: number) {
      if (value < 0) throw new RangeError('limit must be >= 0');
      this._limit = value;
    }
    get remaining(): number {
      return Math.max(0, this._limit - this._spent);
    }
    spend(amount: number): boolean {
      if (amount > this.remaining) return false;
      this._spent += amount;
      return true;
    }
  }

  const b = new Budget();
  b.limit = (await codemode.billing_get_budget({ team: 'data' })).monthly as number;
  const invoices: { amount: number }[] = await codemode.billing_list_invoices({ team: 'data' });
  const rejected = invoices.filter((i) => !b.spend(i.amount)).length;
  return { remaining: b.remaining, rejected };
}
