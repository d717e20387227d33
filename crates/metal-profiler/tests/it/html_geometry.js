// Geometry of the CFG as the browser lays it out, for html_chromium.rs's
// geometry test: injected at the end of a page the profiler wrote; after
// the page's own script ran (the load event), it measures every
// svg.cfg and writes what it found as JSON into a pre element (id
// geometry):
//   overlaps:  a label (SVG text) overlapping another label, or a block box
//              it does not belong to;
//   edge_hits: an edge path that passes through a label (points sampled
//              every 2 px along the path, mapped to the page);
//   clipped:   a block's text that leaves its block's box;
//   fill:      per graph, the SVG's size and its panel's (div.graph) inner
//              size, for the "graph fills its panel" check.
window.addEventListener('load',function(){
  var out={overlaps:[],edge_hits:[],clipped:[],fill:[]};
  function r(e){var b=e.getBoundingClientRect();return {l:b.left,t:b.top,r:b.right,b:b.bottom};}
  function inter(a,b,m){return a.l+m<b.r&&b.l+m<a.r&&a.t+m<b.b&&b.t+m<a.b;}
  function name(e){var g=e.closest('g');return (g&&g.id?g.id:e.getAttribute('class')||'?')+':'+e.textContent.slice(0,30);}
  document.querySelectorAll('svg.cfg').forEach(function(svg){
    var texts=[].slice.call(svg.querySelectorAll('text'));
    var blocks=[].slice.call(svg.querySelectorAll('g.blk'));
    var boxes=blocks.map(function(g){return {g:g,r:r(g.querySelector('rect'))};});
    // labels do not overlap each other
    for(var i=0;i<texts.length;i++){var a=r(texts[i]);
      for(var j=i+1;j<texts.length;j++){if(inter(a,r(texts[j]),0.5))out.overlaps.push(name(texts[i])+' ~ '+name(texts[j]));}
      // nor a block they do not belong to
      var own=texts[i].closest('g.blk');
      boxes.forEach(function(b){if(b.g!==own&&inter(a,b.r,0.5))out.overlaps.push(name(texts[i])+' on block '+b.g.id);});
      // text of a block stays inside its box
      if(own){var o=r(own.querySelector('rect'));if(a.l<o.l-0.5||a.r>o.r+0.5||a.t<o.t-0.5||a.b>o.b+0.5)out.clipped.push(name(texts[i]));}
    }
    // no edge passes through a label
    var m=svg.getScreenCTM();
    svg.querySelectorAll('path.e').forEach(function(p){
      var L=p.getTotalLength();
      for(var s=0;s<=L;s+=2){var q=p.getPointAtLength(s);var x=q.x*m.a+q.y*m.c+m.e,y=q.x*m.b+q.y*m.d+m.f;
        for(var k=0;k<texts.length;k++){var t=r(texts[k]);if(x>t.l+1&&x<t.r-1&&y>t.t+1&&y<t.b-1){out.edge_hits.push(p.getAttribute('data-from')+'->'+p.getAttribute('data-to')+' through '+name(texts[k]));s=L+1;break;}}}
    });
    var g=svg.parentElement,gb=g.getBoundingClientRect(),sb=svg.getBoundingClientRect();
    var panel=g.parentElement.getBoundingClientRect();
    out.fill.push({svg_w:sb.width,svg_h:sb.height,graph_w:gb.width,graph_h:gb.height,panel_w:panel.width,client_w:g.clientWidth,client_h:g.clientHeight});
  });
  var pre=document.createElement('pre');pre.id='geometry';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
});
