//.kernel _ZTSZ4mainEUlT_E_
//.platform PVCXT
//.thread_config numGRF=128, numAcc=4, numSWSB=16
//.options_string ""
//.full_options "-emitLocation -enableCoalesceScalarMoves -hasRNEandDenorm -noStitchExternFunc -linker 63 -preserver0 -abortOnSpill 4 -enableBCR -boundsChecking -presched-rp 100 -nodpsendreorder -SBIDDepLoc -output -binary -dumpcommonisa -dumpcombinedcisa -dumpvisa -printHexFloatInAsm -noDPASMacro -noStitchExternFunc -linker 63 -abiver 2 -LSCFenceWA"
//.instCount 30
//.RA type	GRAPH_COLORING_FF_BC_RA
//.git-hash 
//.GRF count 30
//.spill size 0
//.spill GRF est. ref count 0

//.declare BuiltinA0 (0)  rf=a size=4 type=ud align=1 words (a0.0) IsBuiltin
//.declare BuiltinA0Dot2 (1)  rf=a size=4 type=ud align=1 words (a0.2) IsBuiltin
//.declare %null (9)  rf=r size=4 type=ud align=2 words
//.declare %local_id_x (12)  rf=r size=4 type=ud align=2 words (r1.1)
//.declare %local_size_x (15)  rf=r size=4 type=ud align=2 words (r1.0)
//.declare %group_id_x (18)  rf=r size=4 type=ud align=2 words (r0.1)
//.declare %tsc (24)  rf=r size=20 type=ud align=2 words
//.declare %arg (25)  rf=r size=0 type=ud align=32 words (r26.0)
//.declare %retval (26)  rf=r size=0 type=ud align=32 words (r26.0) Output
//.declare %sp (27)  rf=r size=8 type=uq align=4 words (r127.3)
//.declare %fp (28)  rf=r size=8 type=uq align=4 words (r127.2)
//.declare %sr0 (29)  rf=r size=16 type=ud align=2 words
//.declare %cr0 (30)  rf=r size=12 type=ud align=2 words
//.declare %ce0 (31)  rf=r size=4 type=ud align=2 words
//.declare %dbg0 (32)  rf=r size=8 type=ud align=2 words

// .inputs
// +----------+----------+--------+----------+------------------+
// | id       | type     |  bytes | at       | from             |
// +----------+----------+--------+----------+------------------+
// | V0033    | :w x 16  |   0x20 | r1       | pti[tid]+0x0     |
// | V0034    | :d x 3   |    0xC | r2       | cti+0x0          |
// | V0035    | :uq      |    0x8 | r2+0x10  | cti+0x10         |
// | V0036    | :uq      |    0x8 | r2+0x18  | cti+0x18         |
// | V0037    | :uq      |    0x8 | r2+0x20  | cti+0x20         |
// | V0038    | :q       |    0x8 | r3       | cti+0x40         |
// +----------+----------+--------+----------+------------------+


// B000: Preds:{},  Succs:{B001}
per_thread_prolog:
/* [00000000] */ (W)     mov (16|M0)              r127.0<1>:ud  0x0:ud                                 {A@1}              //  ALU pipe: int; $1
/* [00000010] */ (W)     and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud                           //  ALU pipe: int; $1
/* [00000020] */ (W)     and (1|M0)               r127.0<1>:uw  r0.4<0;1,0>:uw    0xFF:uw                                 //  ALU pipe: int; $1
/* [00000030] */ (W)     add (1|M0)               r127.2<1>:ud  r127.2<0;1,0>:ud  0x80:ud              {I@2}              //  ALU pipe: int; $1
/* [00000040] */ (W)     mad (1|M0)               r127.0<1>:ud  r127.2<0;0>:ud    r127.0<0;0>:uw   0x40:uw {I@1}          //  ALU pipe: int; $1
/* [00000050] */ (W)     load.ugm.d32x16t.a32.ca.cc (1|M0) r1:1          bti[255][r127:1]              {A@1,$0} // ex_desc:0x0; desc:0x4076D14 // $1
/* [00000060] */         nop                                                                                              // 
/* [00000070] */         nop                                                                                              // 
// B001: Preds:{B000},  Succs:{B002}
// cross_thread_prolog:
/* [00000080] */ (W)     and (1|M0)               r127.0<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {$0.src}           //  ALU pipe: int; $1
/* [00000090] */ (W)     load.ugm.d32x32t.a32.ca.cc (1|M0) r2:2          bti[255][r127:1]              {A@1,$1} // ex_desc:0x0; desc:0x4267FD0 // $1
// B002: Preds:{B001},  Succs:{B003, B004}
// _main:

// File: /opt/intel/oneapi/compiler/2025.1/bin/compiler/../../include/sycl/detail/item_base.hpp

// Line 75:  return MIndex[Dim];
/* [000000A0] */ (W)     mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                                            //  ALU pipe: int; $2
/* [000000B0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {A@1,$1.dst}       //  ALU pipe: int; $2
/* [000000C0] */         add (32|M0)              r6.0<1>:d     r4.0<1;1,0>:d     r0.1<0;1,0>:d        {Compacted,I@1}    //  ALU pipe: int; $2
/* [000000C8] */         mov (32|M0)              r8.0<1>:q     r6.0<1;1,0>:d                          {I@1}              //  ALU pipe: int; $2

// File: /home/user/work/bench/src/kernels.cpp

// Line 43:  for (size_t i = it.get_global_id(0); i < n; i += stride) {
/* [000000D8] */         cmp (32|M0)              (lt)f0.0   null<1>:ud r6.0<0;1,0>:ud    r3.0<0;1,0>:ud {I@1}            //  ALU pipe: int; $3
/* [000000E8] */ (W&~f0.0) jmpi                   _L_exit                                                                 //  ALU pipe: int; $3
// B003: Preds:{B002, B003},  Succs:{B003, B004}
_L_k0_0_:

// Line 44:  ptr[i] = value;
/* [000000F8] */         shl (32|M0)              r9.0<1>:q     r8.0<1;1,0>:q     2:w                  {I@1}              //  ALU pipe: int; $4
/* [00000108] */         mov (32|M0)              r11.0<1>:f    r3.4<0;1,0>:f                          {Compacted}        //  ALU pipe: int; $4
/* [00000110] */         add (32|M0)              r9.0<1>:q     r9.0<1;1,0>:q     r2.4<0;1,0>:q        {I@2}              //  ALU pipe: int; $4
/* [00000120] */         store.ugm.d32.a64 (32|M0) [r9:4]        r11:2                                 {A@1,$2} // ex_desc:0x0; desc:0x44D35C0 // $4
/* [00000130] */         add (32|M0)              r8.0<1>:q     r8.0<1;1,0>:q     r3.2<0;1,0>:d        {I@2}              //  ALU pipe: int; $4
/* [00000140] */         shl (32|M0)              r13.0<1>:q    r8.0<1;1,0>:q     2:w                                     //  ALU pipe: int; $5
/* [00000150] */         mov (32|M0)              r15.0<1>:f    r3.4<0;1,0>:f                          {Compacted}        //  ALU pipe: int; $5
/* [00000158] */         add (32|M0)              r13.0<1>:q    r13.0<1;1,0>:q    r2.4<0;1,0>:q        {I@2}              //  ALU pipe: int; $5
/* [00000168] */         store.ugm.d32.a64 (32|M0) [r13:4]       r15:2                                 {A@1,$3} // ex_desc:0x0; desc:0x446BEC0 // $5
/* [00000178] */         add (32|M0)              r8.0<1>:q     r8.0<1;1,0>:q     r3.2<0;1,0>:d        {I@2}              //  ALU pipe: int; $5

// Line 43:  for (size_t i = it.get_global_id(0); i < n; i += stride) {
/* [00000188] */         cmp (32|M0)              (lt)f0.0   null<1>:uq r8.0<1;1,0>:uq    r3.0<0;1,0>:uq {I@1}            //  ALU pipe: int; $6
/* [00000198] */ (W&f0.0) jmpi                    _L_k0_0_                                                                //  ALU pipe: int; $6
// B004: Preds:{B002, B003},  Succs:{}
_L_exit:

// Line 46:  }
/* [000001A8] */ (W)     mov (16|M0)              r112.0<1>:f   r0.0<1;1,0>:f                          {Compacted}        //  ALU pipe: int; $7
/* [000001B0] */ (W)     send.gtwy (1|M0)         null          r112              null:0           0x0              0x02000010 {EOT,A@1} // wr:1+0, rd:0; end of thread // $7

