const counter = (() => {
  let n = 0;
  return { inc: () => ++n, get value() { return n; } };
})();
const tags = await codemode.notes_get_tags({});
tags.forEach(() => counter.inc());
(function () {
  counter.inc();
})();
return counter.value;
