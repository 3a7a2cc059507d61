async()=>{
const   x :number=1,y:string
="a"
let z
  :
  Array<
    number
  >
  = [ x ]
function f
  <T>
  (a
    : T)
  : T
{ return a }
const g=(a:number):number=>a*2
const r=await codemode.echo({value:f<number>(g(x))})as{value:number}
return {r,y,z}
}
