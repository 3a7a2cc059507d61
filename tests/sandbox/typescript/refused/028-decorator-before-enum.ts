// refused: decorator at 4
const d = (c: any) => c;
class Plain {}
@d class Decorated {}
enum Later { A }
return [Plain, Decorated, Later.A];
