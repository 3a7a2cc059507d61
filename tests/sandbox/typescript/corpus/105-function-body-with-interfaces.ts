interface Invoice {
  id: string;
  customer: string;
  amount: number;
  due: string;
  paid: boolean;
}
interface Reminder {
  invoice: string;
  to: string;
  daysLate: number;
}
const invoices: Invoice[] = await codemode.billing_list_invoices({ status: 'unpaid' });
const today = Date.now();
const reminders: Reminder[] = invoices
  .filter((i) => !i.paid && Date.parse(i.due) < today)
  .map((i) => ({ invoice: i.id, to: i.customer, daysLate: Math.floor((today - Date.parse(i.due)) / 864e5) }));
for (const r of reminders.filter((r) => r.daysLate > 14)) {
  await codemode.email_send({ to: r.to, subject: `Invoice ${r.invoice} is ${r.daysLate} days overdue`, body: 'Please pay.' });
}
return reminders;
