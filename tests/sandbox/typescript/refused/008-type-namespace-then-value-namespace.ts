// refused: namespace at 9
namespace Types {
  export interface Page {
    title: string;
  }
  export type Pages = Page[];
}
declare namespace Ambient { const x: number; }
namespace Helpers {
  export const titleOf = (p: Types.Page): string => p.title;
}
const pages: Types.Pages = await codemode.cms_list_pages({});
return pages.map(Helpers.titleOf);
