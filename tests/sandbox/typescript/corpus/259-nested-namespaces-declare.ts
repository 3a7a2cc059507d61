declare namespace GitHub {
  namespace Rest {
    interface Issue {
      number: number;
      title: string;
      labels: Array<string | { name?: string }>;
    }
  }
  type Issues = Rest.Issue[];
}
namespace Local.Types {
  export type LabelCount = Record<string, number>;
}

const issues: GitHub.Issues = await codemode.github_list_issues({ repo: 'acme/api', state: 'open' });
const counts: Local.Types.LabelCount = {};
for (const i of issues) for (const l of i.labels) {
  const name = typeof l === 'string' ? l : l.name ?? '?';
  counts[name] = (counts[name] ?? 0) + 1;
}
return counts;
