// refused: namespace at 2
namespace A.B.C {
  export const depth = 3;
}
return A.B.C.depth;
