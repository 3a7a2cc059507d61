// A large block of type declarations (as a model might paste from API docs)
// followed by a short piece of logic.
interface Address { street: string; city: string; zip: string; country: string }
interface Money { amount: number; currency: 'USD' | 'EUR' | 'GBP' }
interface LineItem { sku: string; name: string; quantity: number; unitPrice: Money; discounts?: Discount[] }
interface Discount { code: string; kind: 'percent' | 'fixed'; value: number; appliesTo?: 'order' | 'item' }
interface Customer { id: string; email: string; name?: string; addresses: { billing: Address; shipping?: Address } }
interface Payment { method: 'card' | 'paypal' | 'invoice'; status: 'pending' | 'captured' | 'refunded'; amount: Money }
interface Shipment { carrier: string; tracking?: string; shippedAt?: string; deliveredAt?: string }
interface Order {
  id: string;
  createdAt: string;
  customer: Customer;
  items: LineItem[];
  payments: Payment[];
  shipments: Shipment[];
  notes?: string[];
  metadata?: Record<string, string>;
}
type OrderStatus = 'new' | 'paid' | 'shipped' | 'delivered' | 'refunded';
type Totals = { gross: number; discount: number; net: number; paid: number; refunded: number };

const statusOf = (o: Order): OrderStatus =>
  o.payments.some((p) => p.status === 'refunded') ? 'refunded'
  : o.shipments.some((s) => s.deliveredAt) ? 'delivered'
  : o.shipments.some((s) => s.shippedAt) ? 'shipped'
  : o.payments.some((p) => p.status === 'captured') ? 'paid'
  : 'new';

function totals(o: Order): Totals {
  const gross = o.items.reduce((s, i) => s + i.quantity * i.unitPrice.amount, 0);
  const discount = o.items.reduce(
    (s, i) => s + (i.discounts ?? []).reduce((d, x) => d + (x.kind === 'percent' ? (i.quantity * i.unitPrice.amount * x.value) / 100 : x.value), 0),
    0,
  );
  const paid = o.payments.filter((p) => p.status === 'captured').reduce((s, p) => s + p.amount.amount, 0);
  const refunded = o.payments.filter((p) => p.status === 'refunded').reduce((s, p) => s + p.amount.amount, 0);
  return { gross, discount, net: gross - discount, paid, refunded };
}

const orders: Order[] = await codemode.shop_list_orders({ days: 3, expand: ['items', 'payments', 'shipments'] });
const byStatus: Partial<Record<OrderStatus, number>> = {};
const unbalanced: string[] = [];
for (const o of orders) {
  const s = statusOf(o);
  byStatus[s] = (byStatus[s] ?? 0) + 1;
  const t = totals(o);
  if (s !== 'new' && s !== 'refunded' && Math.abs(t.net - t.paid) > 0.01) unbalanced.push(`${o.id}: net ${t.net.toFixed(2)} paid ${t.paid.toFixed(2)}`);
}
return { byStatus, unbalanced };
