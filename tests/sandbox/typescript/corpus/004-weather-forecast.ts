async () => {
  interface Forecast {
    date: string;
    high: number;
    low: number;
    summary: string;
  }

  const cities: string[] = ['Oslo', 'Lisbon', 'Tokyo'];
  const results = await Promise.all(
    cities.map(async (city): Promise<[string, Forecast[]]> => {
      const f = await codemode.weather_get_forecast({ city, days: 3 });
      return [city, f.days as Forecast[]];
    }),
  );

  const warmest = results
    .map(([city, days]) => ({ city, max: Math.max(...days.map((d) => d.high)) }))
    .sort((a, b) => b.max - a.max)[0];

  return warmest;
}
