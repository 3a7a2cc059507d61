let type = 'initial'
let declare = 0
let abstract = 'no'
let namespace = 'default'
type
= 'reassigned'
declare
++
abstract
namespace
const info = await codemode.kubectl_get_pods({ namespace })
return { type, declare, abstract, n: info.items.length }
