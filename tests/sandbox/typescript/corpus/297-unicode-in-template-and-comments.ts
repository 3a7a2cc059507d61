async () => {
  // Übersicht über offene Tickets — «wichtig» zuerst
  type Priorität = 'hoch' | 'mittel' | 'niedrig';
  interface Ticket { titel: string; priorität: Priorität; erstellt: string }
  const tickets: Ticket[] = await codemode.helpdesk_list_tickets({ status: 'offen' });
  const rang: Record<Priorität, number> = { hoch: 0, mittel: 1, niedrig: 2 };
  /* sortiert nach Priorität, dann Alter — 古い順 */
  const sortiert = [...tickets].sort((a, b) => rang[a.priorität] - rang[b.priorität] || a.erstellt.localeCompare(b.erstellt));
  return sortiert.map((t) => `【${t.priorität}】 ${t.titel} — ${t.erstellt.slice(0, 10)}`);
}
