// examples/exec_echo.js: a guest that calls a tool the caller answers.
//   corral exec --server ws://127.0.0.1:8080 --echo examples/exec_echo.js
async () => {
  const reply = await codemode.echo({ greeting: "hello", n: 41 });
  console.log("the caller answered", JSON.stringify(reply));
  return { greeting: reply.greeting, n: reply.n + 1 };
}
