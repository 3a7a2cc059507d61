// refused: namespace at 3
type Unit = 'ms' | 's';
module Timing {
  export let unit: Unit = 'ms';
}
return Timing.unit;
