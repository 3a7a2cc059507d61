async () => {
  const render = ({ title, items, ordered = false }: { title: string; items: string[]; ordered?: boolean }): string =>
    [`## ${title}`, ...items.map((it, i) => (ordered ? `${i + 1}. ${it}` : `- ${it}`))].join('\n');

  const notes = await codemode.notes_list({ tag: 'todo' });
  return render({ title: 'TODO', items: notes.map((n: { text: string }) => n.text), ordered: true });
}
