// refused: import = at 3
declare namespace Tools { const git: string; }
export import git = Tools.git;
