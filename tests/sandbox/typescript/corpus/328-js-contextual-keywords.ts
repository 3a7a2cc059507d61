const type = 'deployment';
const namespace = 'prod';
let declare = false;
const as = 'as', of = [1, 2];
let abstract = null;
const module = { exports: {} };
const target = await codemode.kubectl_get({ kind: type, namespace });
for (const of_ of of) declare = declare || of_ > 1;
abstract
class Thing {}
namespace
return { type, namespace, declare, as, n: target.items.length, thing: typeof Thing, module: typeof module };
