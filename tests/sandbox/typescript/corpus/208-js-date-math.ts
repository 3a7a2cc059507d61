const events = await codemode.calendar_list_events({ from: '2024-06-01', to: '2024-06-30' });
const minutes = events.reduce((sum, e) => sum + (Date.parse(e.end) - Date.parse(e.start)) / 60000, 0);
const byWeekday = [0, 0, 0, 0, 0, 0, 0];
for (const e of events) byWeekday[new Date(e.start).getUTCDay()] += 1;
const busiest = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][byWeekday.indexOf(Math.max(...byWeekday))];
return { hours: Math.round(minutes / 60), busiest };
