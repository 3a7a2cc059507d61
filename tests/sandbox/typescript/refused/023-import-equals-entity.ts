// refused: import = at 6
namespace Geometry {
  export interface Point { x: number; y: number }
}
declare namespace Lib { namespace Deep { const value: number; } }
import value = Lib.Deep.value;
const p: Geometry.Point = { x: value, y: 0 };
return p;
