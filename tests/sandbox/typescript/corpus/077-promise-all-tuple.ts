async () => {
  type Weather = { tempC: number; wind: number };
  type Calendar = { title: string; start: string }[];
  type Inbox = { unread: number };

  const [weather, calendar, inbox]: [Weather, Calendar, Inbox] = await Promise.all([
    codemode.weather_current({ city: 'Berlin' }) as Promise<Weather>,
    codemode.calendar_list_events({ day: 'today' }) as Promise<Calendar>,
    codemode.email_inbox_stats({}) as Promise<Inbox>,
  ]);

  return [
    `It is ${weather.tempC}°C with wind ${weather.wind} km/h.`,
    `${calendar.length} meetings, first: ${calendar[0]?.title ?? 'none'}.`,
    `${inbox.unread} unread emails.`,
  ].join(' ');
}
