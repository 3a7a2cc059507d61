// refused: enum at 6
declare enum Ambient { A, B }
declare const enum AlsoAmbient { C = 1 }
// "enum Fake {}" in a comment is not an enum
const s: string = 'enum NotOne { X }';
enum Real { X = 1 }
return [Ambient.A, AlsoAmbient.C, Real.X, s];
