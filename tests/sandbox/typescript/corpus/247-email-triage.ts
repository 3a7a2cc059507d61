async () => {
  type Email = { id: string; from: string; subject: string; snippet: string; labels: string[] };
  type Bucket = 'urgent' | 'customers' | 'newsletters' | 'other';
  const classify = ({ from, subject, labels }: Email): Bucket => {
    if (/urgent|outage|down|asap/i.test(subject)) return 'urgent';
    if (labels.includes('CATEGORY_PROMOTIONS') || /newsletter|digest/i.test(subject)) return 'newsletters';
    if (/@(acme-customer|bigco)\./.test(from)) return 'customers';
    return 'other';
  };
  const inbox: Email[] = await codemode.email_search({ query: 'is:unread newer_than:2d', max: 100 });
  const buckets = new Map<Bucket, Email[]>();
  for (const e of inbox) buckets.set(classify(e), [...(buckets.get(classify(e)) ?? []), e]);
  for (const e of buckets.get('newsletters') ?? []) await codemode.email_archive({ id: e.id });
  return Object.fromEntries([...buckets].map(([b, es]) => [b, es.map((e) => e.subject)]));
}
