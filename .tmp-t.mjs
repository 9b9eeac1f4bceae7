import {remark} from 'remark';
import remarkGfm from 'remark-gfm';
import remarkFrontmatter from 'remark-frontmatter';
const p = remark().use(remarkFrontmatter,['yaml']).use(remarkGfm);
const src = process.argv[2].replace(/\\n/g,'\n').replace(/\\r/g,'\r').replace(/\\t/g,'\t').replace(/\\u\{(\w+)\}/g,(m,h)=>String.fromCodePoint(parseInt(h,16)));
const tree = p.parse(src);
function show(n,d=0){const pos=n.position?`${n.position.start.line}:${n.position.start.column}(${n.position.start.offset})-${n.position.end.line}:${n.position.end.column}(${n.position.end.offset})`:'';
console.log(' '.repeat(d*2)+n.type+' '+pos+(n.value!==undefined?' '+JSON.stringify(n.value):'')+(n.checked!=null?' checked='+n.checked:'')+(n.depth?' depth='+n.depth:'')+(n.url!==undefined?' url='+JSON.stringify(n.url):'')+(n.spread!=null?' spread='+n.spread:''));
for(const c of n.children||[])show(c,d+1);}
show(tree);
