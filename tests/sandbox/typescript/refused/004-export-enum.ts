// refused: enum at 3
import type { Foo } from './foo';
export enum Color { Red = '#f00', Green = '#0f0' }
export const favourite: Color = Color.Red;
export type { Foo };
