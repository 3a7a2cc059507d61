// refused: decorator at 4
function sealed<T extends Function>(ctor: T): T { Object.seal(ctor); return ctor; }

@sealed
class Report {
  title: string = 'weekly';
}
return new Report().title;
