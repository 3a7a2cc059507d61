// refused: decorator at 3
const track = (c: any) => c;
const Widget = @track class {
  size = 1;
};
return new Widget().size;
