const loadAll = async (ids: string[]): Promise<
  Array<{ id: string; title: string; done: boolean }>
> => {
  const out: Array<{ id: string; title: string; done: boolean }> = [];
  for (const id of ids) out.push(await codemode.todo_get({ id }));
  return out;
};

const ids: string[] = await codemode.todo_list_ids({ project: 'home' });
const todos = await loadAll(ids.slice(0, 10));
return todos.filter((t) => !t.done).map((t) => t.title);
