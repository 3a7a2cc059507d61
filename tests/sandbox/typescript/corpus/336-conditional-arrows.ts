// Choosing a mapper with a conditional: concise arrows whose bodies are
// parenthesised, one branch after the other, the second unparenthesised.
interface Row { id: number; title: string }

const compact = process_mode() === 'compact';
const toRow = compact ? id => ({ id }) : id => ({ id, title: `#${id}` });
const pick = compact ? (r: Row) => (r.id) : r => r.title;
const label = (n: number): string => n > 1 ? `${n} issues` : n === 1 ? 'one issue' : 'none';

function process_mode(): string {
  return 'full';
}

const ids: number[] = (await codemode.list_issue_ids({ state: 'open' })) as number[];
return { rows: ids.map(toRow), picked: ids.map((id) => pick({ id, title: String(id) } as Row)), label: label(ids.length) };
