type Condition = { metric: 'temp' | 'wind' | 'rain'; op: '>' | '<'; value: number };
type Rule = { name: string; all: Condition[] };
type Reading = Record<Condition['metric'], number>;

const rules: Rule[] = [
  { name: 'heat', all: [{ metric: 'temp', op: '>', value: 32 }] },
  { name: 'storm', all: [{ metric: 'wind', op: '>', value: 60 }, { metric: 'rain', op: '>', value: 10 }] },
  { name: 'frost', all: [{ metric: 'temp', op: '<', value: 0 }] },
];
const holds = (c: Condition, r: Reading): boolean => (c.op === '>' ? r[c.metric] > c.value : r[c.metric] < c.value);

const forecast: (Reading & { day: string })[] = await codemode.weather_get_forecast({ city: 'Vienna', days: 5 });
const alerts = forecast.flatMap((f) => rules.filter((rule) => rule.all.every((c) => holds(c, f))).map((rule) => `${f.day}: ${rule.name}`));
return alerts.length ? alerts : 'no alerts';
