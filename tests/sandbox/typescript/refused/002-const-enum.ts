// refused: enum at 5
async () => {
  type Level = 'low' | 'high';
  const level: Level = 'low';
  const enum Priority { Low = 1, High = 2 }
  const p = level === 'low' ? Priority.Low : Priority.High;
  return codemode.jira_search({ jql: `priority = ${p}` });
}
