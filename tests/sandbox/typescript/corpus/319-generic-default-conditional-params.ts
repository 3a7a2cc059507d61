async () => {
  type Fetcher<Out = unknown, In extends object = {}> = keyof In extends never
    ? () => Promise<Out>
    : (input: In) => Promise<Out>;
  const latest: Fetcher<{ tag: string }> = () => codemode.github_latest_release({ repo: 'acme/cli' });
  const byTag: Fetcher<{ body: string }, { tag: string }> = ({ tag }) => codemode.github_release_by_tag({ repo: 'acme/cli', tag });
  const { tag } = await latest();
  return (await byTag({ tag })).body.split('\n').slice(0, 5);
}
