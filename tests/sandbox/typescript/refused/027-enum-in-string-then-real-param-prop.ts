// refused: parameter property at 6
const docs: string = `
  enum Fake { A }   // inside a template literal
  namespace Fake2 { export const x = 1 }
`;
class Holder { constructor(readonly docs: string) {} }
return new Holder(docs).docs.length;
