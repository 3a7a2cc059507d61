// refused: namespace at 8
declare namespace Outer {
  namespace Inner {
    const x: number;
  }
}
declare module 'pkg' { export const y: number; }
namespace Real { export const z = Outer.Inner.x; }
return Real.z;
